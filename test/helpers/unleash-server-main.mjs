// unleash-server for the tests (started by test/helpers/unleash-server.ts), configured by its
// environment. `node unleash-server-main.mjs` serves; `… migrate` migrates DATABASE_URL and exits.
// Plain JavaScript: it runs on a Node.js >= 22 binary that may not be the one running the tests.

// Standard input is a pipe from the test process; the system closes it however that process ends
// (even killed), so no server outlives its tests.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

const entry = import.meta.resolve('unleash-server');
if (process.argv[2] === 'migrate') {
  // The package exports `migrateDb` but not the config loader that reads DATABASE_URL.
  const { createConfig } = await import(new URL('./create-config.js', entry).href);
  const { migrateDb } = await import(entry);
  await migrateDb(createConfig({}));
  process.exit(0);
} else {
  const { start } = await import(entry);
  await start();
}
