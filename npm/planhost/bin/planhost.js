#!/usr/bin/env node
"use strict";
// `planhost`: runs this machine's planhost binary (from @planhost/<os>-<cpu>) with these
// arguments, stdio, exit status and signals.
require("../lib/binary.js").run("planhost", 1);
