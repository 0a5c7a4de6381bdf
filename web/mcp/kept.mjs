// A JSON object kept in a file of the origin private file system (beside the archive's folder), read
// and changed one change at a time: the bearer tokens (servers.mjs) and the OAuth sign-ins (signin.mjs)
// each have one, which no export, backup or sync reads.

/** The file `name`'s keeper: `read()` resolves to the object (`{}` when there is none or it cannot be
 * read), `update(change)` reads it, calls `change(object)` and writes it back, after any change before. */
export function keptFile(name) {
  let queue = Promise.resolve();
  const handle = async () => (await navigator.storage.getDirectory()).getFileHandle(name, { create: true });
  const read = async () => {
    try {
      const text = await (await (await handle()).getFile()).text();
      return text ? JSON.parse(text) : {};
    } catch {
      return {};
    }
  };
  const update = (change) => {
    const run = queue.then(async () => {
      const all = await read();
      change(all);
      const writable = await (await handle()).createWritable();
      await writable.write(JSON.stringify(all));
      await writable.close();
    });
    queue = run.catch(() => {});
    return run;
  };
  return { read: async () => (await queue, read()), update };
}
