export function import_module(url) { return import(url); }
let p; export function import_bundle(url) { return (p ??= import(url).then(() => globalThis.CoworkMcp)); }
