/** Reasons for the errno codes an operator meets when a path is wrong, in words. */
const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'it is a folder',
  EEXIST: 'it already exists',
  EBUSY: 'it is in use (a mount point?)',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EXDEV: 'it is on another file system',
};

/**
 * Why a file system call failed, in a few words for a one-line CLI error
 * (`permission denied`, `read-only file system`), without Node's errno text
 * and path; the errno code when it has no words here, the message for any
 * other error.
 */
export function fileErrorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && (error as NodeJS.ErrnoException).syscall !== undefined) return REASONS[code] ?? `error ${code}`;
  return error instanceof Error ? error.message : String(error);
}
