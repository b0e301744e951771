import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from '@20minutes/s3rver';
import { createFsBlobStore } from '@agentinfra/adapter-fs';
import { createS3BlobStore } from '@agentinfra/adapter-s3';
import type { BlobStore, HttpMount } from '@agentinfra/core';

/** A blob store for a test kernel, with what the kernel must mount and how to tear it down. */
export interface BlobBackend {
  /** The store, recording the target of every `move` in {@link BlobBackend.movedTo}. */
  store: BlobStore;
  /** Keys objects were moved to (the committed keys /commit tried), oldest first. */
  movedTo: string[];
  /** When set, every `move` awaits it first (a test looks at the database as a commit moves the upload). */
  beforeMove: ((options: { from: string; to: string }) => Promise<void>) | null;
  mounts: HttpMount[];
  /** Tells the backend the test server's URL once it listens (the fs store's URLs point at it). */
  serverListening(url: string): void;
  stop(): Promise<void>;
}

/** One blob store of the test matrix. */
export interface BlobBackendEntry {
  name: 'fs' | 's3';
  start(): Promise<BlobBackend>;
}

/** `backend` with its store's every move target recorded in `movedTo`, after its `beforeMove` hook. */
function recordingMoves(store: BlobStore, backend: Omit<BlobBackend, 'store' | 'movedTo' | 'beforeMove'>): BlobBackend {
  const recording: BlobBackend = {
    ...backend,
    movedTo: [],
    beforeMove: null,
    store: {
      ...store,
      move: async (options) => {
        recording.movedTo.push(options.to);
        await recording.beforeMove?.(options);
        return store.move(options);
      },
    },
  };
  return recording;
}

async function startFs(): Promise<BlobBackend> {
  const dir = await mkdtemp(join(tmpdir(), 'agentinfra-artifacts-fs-'));
  let base = '';
  const fs = createFsBlobStore({ dir, publicUrl: () => base, signingKey: randomBytes(32), durable: false });
  return recordingMoves(fs.store, {
    mounts: [fs.mount],
    serverListening(url) {
      base = url;
    },
    stop: () => rm(dir, { recursive: true, force: true }),
  });
}

/** s3rver (an S3-API server that checks SigV4 signatures) on 127.0.0.1 port 0, with its built-in S3RVER/S3RVER account. */
async function startS3(): Promise<BlobBackend> {
  const directory = await mkdtemp(join(tmpdir(), 'agentinfra-artifacts-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = (await server.run()) as AddressInfo;
  const store = await createS3BlobStore({
    url: `http://127.0.0.1:${port}`,
    bucket: 'artifacts-test',
    accessKey: 'S3RVER',
    secretKey: 'S3RVER',
    createBucket: true,
  });
  return recordingMoves(store, {
    mounts: [],
    serverListening() {},
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  });
}

/** The blob stores every artifacts test runs on: the fs adapter and the S3 adapter against s3rver. */
export const blobBackends: BlobBackendEntry[] = [
  { name: 'fs', start: startFs },
  { name: 's3', start: startS3 },
];
