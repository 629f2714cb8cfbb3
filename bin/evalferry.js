#!/usr/bin/env node
import { run } from '../dist/src/cli/main.js'

// The `yaml` parser reads process.env for each token it parses, and each read of the real
// environment is a call into the runtime. This process only reads its environment: a plain copy
// of it reads a YAML dataset a fifth faster.
process.env = { ...process.env }

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  isTTY: Boolean(process.stderr.isTTY),
})
