#!/usr/bin/env node
// The scimd command: serve, migrate, and the admin API client. Compiled code lives in dist/
// (built by `npm ci` through the prepare script, and by `npm start`).
import { main } from '../dist/src/cli.js';

process.exitCode = await main(process.argv.slice(2));
