// The extension's entry point. It lives in a folder named `planhost` because pi labels a local
// extension by its folder (`src/index.ts` showed as "src" in pi's list).
export { default } from "../src/index.ts";
