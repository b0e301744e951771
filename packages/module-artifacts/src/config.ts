import type { EnvBinding } from '@agentinfra/core';
import { z } from 'zod';

/** 5 GiB: CONTRACT.md's default artifact size, also the largest single PUT (and server-side copy) S3 accepts. */
export const MAX_ARTIFACT_BYTES = 5 * 1024 ** 3;
/** S3's longest presigned URL lifetime (7 days), in seconds. */
const MAX_URL_SECONDS = 604_800;

/** The `artifacts` section of the config. */
export const artifactsConfigSchema = z
  .object({
    /** Largest artifact in bytes (CONTRACT.md default 5 GiB); /register answers 413 above it. */
    maxSizeBytes: z.number().int().min(1).max(MAX_ARTIFACT_BYTES).default(MAX_ARTIFACT_BYTES),
    /** Seconds an upload URL accepts PUTs (default 1 h). */
    uploadUrlSeconds: z.number().int().min(1).max(MAX_URL_SECONDS).default(3_600),
    /** Seconds a download URL from /fetch works (CONTRACT.md default 300 s). */
    downloadUrlSeconds: z.number().int().min(1).max(MAX_URL_SECONDS).default(300),
    /** Seconds after registration when a never-committed artifact is abandoned by the sweep (default 24 h). */
    abandonPendingAfterSeconds: z.number().int().min(60).default(86_400),
  })
  .refine((config) => config.abandonPendingAfterSeconds > config.uploadUrlSeconds, {
    message: 'must be longer than uploadUrlSeconds',
    path: ['abandonPendingAfterSeconds'],
  });
/** The validated `artifacts` config section. */
export type ArtifactsConfig = z.output<typeof artifactsConfigSchema>;
/** The `artifacts` config section as written in `agentinfra.config.json` (every field optional). */
export type ArtifactsConfigInput = z.input<typeof artifactsConfigSchema>;

/** Environment variables of the artifacts section. */
export const artifactsEnv: readonly EnvBinding[] = [
  { name: 'AGENTINFRA_ARTIFACTS_MAX_SIZE_BYTES', path: ['maxSizeBytes'], type: 'integer' },
  { name: 'AGENTINFRA_ARTIFACTS_UPLOAD_URL_SECONDS', path: ['uploadUrlSeconds'], type: 'integer' },
  { name: 'AGENTINFRA_ARTIFACTS_DOWNLOAD_URL_SECONDS', path: ['downloadUrlSeconds'], type: 'integer' },
  { name: 'AGENTINFRA_ARTIFACTS_ABANDON_PENDING_AFTER_SECONDS', path: ['abandonPendingAfterSeconds'], type: 'integer' },
];
