export { FsAdapterError } from './fs-adapter-error.js';
export { createFsBlobStore, type FsBlobStore, type FsBlobStoreOptions } from './fs-blob-store.js';
