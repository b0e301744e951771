import { describe, expect, it } from 'vitest';
import { errorResult } from './tool-errors.js';

describe('errorResult', () => {
  it('lists each invalid field as one sentence, without doubling a full stop the message already has', () => {
    const result = errorResult({
      error: {
        code: 'invalid_request',
        message: 'The request body does not match the schema.',
        details: {
          fields: [
            { path: 'scopes', message: 'Unknown field.' },
            { path: 'agent_id', message: 'Invalid input: expected string, received undefined' },
          ],
        },
      },
    });
    expect(result.content[0]).toEqual({
      type: 'text',
      text: 'invalid_request: The request body does not match the schema. scopes: Unknown field. agent_id: Invalid input: expected string, received undefined.',
    });
  });
});
