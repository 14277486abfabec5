// The appliance version: package.json's, stamped into the executable at build time (esbuild define); "-dev" when run from source.
declare const __CONFVAULT_VERSION__: string | undefined;

export const VERSION: string = typeof __CONFVAULT_VERSION__ === 'string' ? __CONFVAULT_VERSION__ : '0.1.0-dev';
