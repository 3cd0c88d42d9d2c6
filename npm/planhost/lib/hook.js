"use strict";
// `planhost-hook` through node, when bin/planhost-hook finds no binary: the message that says
// what to do, and exit status 2, which the agents take as "block this tool call" (a missing
// planhost fails closed).
require("./binary.js").run("planhost-hook", 2);
