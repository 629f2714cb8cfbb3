#!/usr/bin/env node
import { run } from '../dist/src/cli/main.js'

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  isTTY: Boolean(process.stderr.isTTY),
})
