import { buildDashboard } from '../lib/dashboard/build';

// Run by scripts/start and scripts/test; a no-op when dashboard/dist matches the sources' hash.
buildDashboard().then(
  ({ built, hash }) => console.log(built ? `dashboard built (${hash})` : `dashboard up to date (${hash})`),
  (err) => {
    console.error(err.message ?? err);
    process.exitCode = 1;
  },
);
