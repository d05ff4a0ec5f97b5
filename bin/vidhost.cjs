#!/usr/bin/env node
// `vidhost` CLI entry: runs cli/vidhost.ts through tsx, from wherever it is installed.
require('tsx/cjs/api').register();
const { main } = require('../cli/vidhost.ts');
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
