import aws4 from 'aws4';

/** Options of {@link presignLengthBoundPut}. */
export interface LengthBoundPutOptions {
  /**
   * The object's URL without a query, path segments percent-encoded as SigV4 canonicalises them
   * (RFC 3986): `http://minio:9000/bucket/a%20b` (path-style) or `https://bucket.s3.eu-west-1.amazonaws.com/a%20b`.
   */
  objectUrl: URL;
  /** The only body length the URL accepts, in bytes. */
  size: number;
  /** Lifetime of the URL, in seconds (S3 accepts 1 to 604 800). */
  expiresInSeconds: number;
  region: string;
  accessKey: string;
  secretKey: string;
  /** Temporary credentials' token, sent (and signed) as `X-Amz-Security-Token`. */
  sessionToken?: string;
}

/**
 * A SigV4 query-signed ("presigned") S3 PUT URL whose signature covers the
 * `host` and `content-length` headers, signed by the `aws4` package: S3 then
 * answers any PUT whose `Content-Length` is not `size` (or that has none, as a
 * chunked upload) with 403 SignatureDoesNotMatch, before storing anything.
 * The payload itself is `UNSIGNED-PAYLOAD`, as in every presigned PUT.
 * @returns the URL, valid from now for `expiresInSeconds`.
 */
export function presignLengthBoundPut(options: LengthBoundPutOptions): string {
  const { objectUrl } = options;
  const signed = aws4.sign(
    {
      service: 's3',
      region: options.region,
      method: 'PUT',
      host: objectUrl.host,
      path: `${objectUrl.pathname}?X-Amz-Expires=${options.expiresInSeconds}`,
      headers: { host: objectUrl.host, 'content-length': String(options.size) },
      signQuery: true,
    },
    { accessKeyId: options.accessKey, secretAccessKey: options.secretKey, sessionToken: options.sessionToken },
  );
  return `${objectUrl.protocol}//${objectUrl.host}${signed.path}`;
}
