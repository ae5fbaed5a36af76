#!/usr/bin/env node
/** Entry point of the `cfghub` command; the commands themselves are in program.ts. */
import { main } from './program.js';

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
