// The dashboard is served by the API under /dashboard/; built by lib/dashboard/build.ts.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/dashboard/',
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { target: 'es2022', sourcemap: false, assetsInlineLimit: 0 },
});
