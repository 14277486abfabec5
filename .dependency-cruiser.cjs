// The layer diagram, enforced (`npm run depcheck`; test/foundation/layers.test.ts proves each rule bites):
//
//   main ─► cli ─► app (composition root: app factory, route list, server, bootstrap, /api/v1 gate)
//                   │
//        cli / app / web ─► routes ─► services ─► stores ─► db
//                               engine ─► services        (never stores, routes, web, db; types only from db)
//                     events ─► engine, services        (the same; only the CLI, serve, imports events)
//   features, engine, web ─► templates ─► lib             (the template library imports nothing else)
//   http (generic plumbing) ─► lib, errors, config, identity   (types only from db and store)
//   nothing imports app except cli and main; no cycles.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Imports run one way: a cycle means two modules each depend on the other.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'features-not-to-upper-layers',
      comment:
        'A feature (routes, services, stores) never imports the engine, the web interface, the composition root or the CLI; the template library is shared through src/templates.',
      severity: 'error',
      from: { path: '^src/features/' },
      to: { path: '^src/(engine|events|web|app|cli)/' },
    },
    {
      name: 'http-is-plumbing',
      comment: 'src/http holds generic HTTP plumbing only: it imports lib, errors, config and identity (and only types from db and store).',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/', pathNot: '^src/(http|lib|config|identity|db|store)/|^src/errors\\.ts$' },
    },
    {
      name: 'http-types-only-from-db-and-store',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(db|store)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'engine-through-services',
      comment: 'The engine reaches data through service functions: no store, route, web, app or CLI import.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '\\.(store|routes)\\.tsx?$|^src/(web|app|cli|http)/' },
    },
    {
      name: 'engine-types-only-from-db',
      comment: 'The engine passes the database handle on to services; it never uses it itself.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/db/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'collector-site-side',
      comment:
        'The site side of remote collectors (src/collector) runs the engine and talks HTTP to the central: it never touches the database, a store, a service, a route, the web interface or the composition root.',
      severity: 'error',
      from: { path: '^src/collector/' },
      to: { path: '^src/(db|features|web|app|cli|http|events|store)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-cli-imports-collector',
      comment: 'The site side is started by `confvault collector`: nothing else imports src/collector.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(collector|cli)/' },
      to: { path: '^src/collector/' },
    },
    {
      name: 'events-through-services',
      comment: 'The syslog receiver and event backups reach data through services and back up through the engine: no store, route, web, app or HTTP code.',
      severity: 'error',
      from: { path: '^src/events/' },
      to: { path: '\\.(store|routes)\\.tsx?$|^src/(web|app|cli)/|^src/http/(?!context\\.ts$)' },
    },
    {
      name: 'events-types-only-from-db',
      comment: 'Events pass the database handle on to services; they never use it themselves.',
      severity: 'error',
      from: { path: '^src/events/' },
      to: { path: '^src/db/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-cli-imports-events',
      comment: 'Event backups are started by serve: nothing but the CLI imports src/events (features, engine, web and HTTP never do).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(events|cli)/' },
      to: { path: '^src/events/' },
    },
    {
      name: 'templates-import-nothing',
      comment:
        'The template library (built-ins, validator, pattern compiler, fingerprint) imports nothing but itself, lib and the asset reader its YAML files come through.',
      severity: 'error',
      from: { path: '^src/templates/' },
      to: { path: '^src/', pathNot: '^src/(templates|lib)/|^src/runtime/assets\\.ts$' },
    },
    {
      name: 'only-cli-imports-app',
      comment: 'The composition root is imported by the CLI and main only.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(app|cli)/|^src/main\\.ts$' },
      to: { path: '^src/app/' },
    },
    {
      name: 'cli-through-services',
      comment: 'The CLI calls services, never stores.',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '\\.store\\.ts$' },
    },
    {
      name: 'web-and-app-through-services',
      comment: 'Pages and the composition root call services; a store is reached only by a service (a row type may be shared).',
      severity: 'error',
      from: { path: '^src/(web|app)/', pathNot: '\\.(service|store)\\.ts$' },
      to: { path: '\\.store\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'routes-not-to-stores',
      comment: 'A route calls one service function; queries live behind the services.',
      severity: 'error',
      from: { path: '\\.routes\\.tsx?$' },
      to: { path: '\\.store\\.ts$' },
    },
    {
      name: 'stores-are-the-bottom',
      comment: 'Stores import the database and their own kind only: never a service, route, web page or the engine.',
      severity: 'error',
      from: { path: '\\.store\\.ts$' },
      to: { path: '\\.(service|routes)\\.tsx?$|^src/(web|engine|events|app|cli|http)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
