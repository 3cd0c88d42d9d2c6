#!/usr/bin/env node
"use strict";
// `planhost-hook`: the small hook binary an agent runs for each event. With no binary it exits
// 2, which the agents take as "block this tool call": a missing planhost fails closed.
require("../lib/binary.js").run("planhost-hook", 2);
