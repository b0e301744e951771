/**
 * The slice of @20minutes/s3rver (an S3 API server that checks SigV4
 * signatures; it ships no type declarations) that the S3 tests use.
 */
declare module '@20minutes/s3rver' {
  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    configureBuckets?: Array<{ name: string; configs?: Array<string | Buffer> }>;
    [option: string]: unknown;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    /** Starts listening. @returns the bound address. */
    run(): Promise<import('node:net').AddressInfo>;
    close(): Promise<void>;
  }
}
