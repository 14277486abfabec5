// The appliance version, stamped at build time (esbuild define) and read from package.json in development.
declare const __CONFVAULT_VERSION__: string | undefined;

export const VERSION: string = typeof __CONFVAULT_VERSION__ === 'string' ? __CONFVAULT_VERSION__ : '0.1.0-dev';
