// Cowork's service worker: keeps this build's app shell (HTML, JS, wasm, CSS, the storage worker) in a
// versioned cache, so the app opens, lists, searches and reads sessions with no network. The archive
// itself is in OPFS, not here. scripts/service-worker.sh fills in VERSION and FILES at each build; a new
// build has a new version, installs beside the old one, and deletes the old cache when it activates.
const VERSION = '__VERSION__';
const FILES = [__FILES__];
const CACHE = `cowork-shell-${VERSION}`;
// Files the app loads only when needed (the code highlighter, the sync transport, the MCP client): not fetched at install, kept once the app
// has asked for one, in a cache that outlives versions (their names carry their content's hash) and
// keeps only this build's.
const LAZY = [__LAZY__].map((f) => new URL(f, self.location).href);
const LAZY_CACHE = 'cowork-lazy';
const SEMANTIC_CACHE = 'cowork-semantic';

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(['./', ...FILES]))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('cowork-shell-') && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => caches.open(LAZY_CACHE))
      .then((lazy) => lazy.keys().then((old) => Promise.all(old.filter((r) => !LAZY.includes(r.url)).map((r) => lazy.delete(r)))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  if (LAZY.includes(request.url)) {
    event.respondWith(
      caches.open(LAZY_CACHE).then((lazy) =>
        lazy.match(request.url, { ignoreVary: true }).then(
          (hit) =>
            hit ??
            fetch(request).then((response) => {
              if (response.ok) lazy.put(request.url, response.clone());
              return response;
            }),
        ),
      ),
    );
    return;
  }
  // The model's worker for recall by meaning (semantic/, a few MB, loaded only once the user turns it
  // on): from the network while there is one, and kept, so recall by meaning works offline too. Its
  // own cache: the app's versions come and go without dropping it. (The model's weights are not here:
  // that worker keeps them in OPFS.)
  if (new URL(request.url).pathname.includes('/semantic/')) {
    const kept = () => caches.open(SEMANTIC_CACHE).then((c) => c.match(request.url, { ignoreVary: true }));
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok) {
            const copy = response.clone();
            caches.open(SEMANTIC_CACHE).then((c) => c.put(request.url, copy));
          }
          return response;
        })
        .catch(() => kept().then((hit) => hit ?? Response.error())),
    );
    return;
  }
  // Content-hashed files never change: the cached copy is the right one. Everything else (the page,
  // the storage worker's files, whose names carry no hash) comes from the network while there is one,
  // so a new build never runs with an old worker; the cache answers when the network is gone.
  const hashed = /-[0-9a-f]{16}(_bg)?\.[a-z]+$/.test(new URL(request.url).pathname);
  // ignoreVary: the server varies on Origin (CORS), and module scripts are requested with one while the
  // precache fetched them without; the URL alone names the file.
  const cached = () =>
    caches.open(CACHE).then((cache) => cache.match(request.mode === 'navigate' ? './' : request.url, { ignoreVary: true }));
  event.respondWith(
    hashed
      ? cached().then((hit) => hit ?? fetch(request))
      : fetch(request).catch(() => cached().then((hit) => hit ?? Response.error())),
  );
});
