// The one line `confvault --help` shows for `serve`: shared by the command and by the executable's smaller CLI bundle,
// which lists `serve` without carrying its code (build/build.mjs, src/exe-main.ts).
export const SERVE_SUMMARY = 'Run the appliance: API, web interface and backup schedule';
