export { S3AdapterError } from './s3-adapter-error.js';
export { createS3BlobStore, type S3BlobStoreOptions } from './s3-blob-store.js';
