// A second reporter for scripts/run-tests.mjs: one JSON line per failure, saying which file it was
// in and whether that file's process died of a signal (a native crash) rather than a test failing.
export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { file, name, details } = event.data;
    yield `${JSON.stringify({ file, name, signal: details?.error?.signal ?? null })}\n`;
  }
}
