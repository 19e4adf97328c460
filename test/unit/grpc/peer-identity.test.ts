// callerIdentity (docs/security.md § Reservations per client): who a call is from, by certificate, and
// when a service certificate may speak for a client.
import * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { callerIdentity } from '../../../src/grpc/peer-identity.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

function call(opts: { forwarded?: string; cert?: Partial<PeerCertificate> & { ext_key_usage?: string[] } }) {
  const metadata = new grpc.Metadata();
  if (opts.forwarded !== undefined) metadata.set('blockx-client', opts.forwarded);
  return {
    metadata,
    getAuthContext: () =>
      opts.cert === undefined ? {} : { sslPeerCertificate: opts.cert as unknown as PeerCertificate },
  };
}

const submitter = { subject: { CN: 'alice' }, fingerprint256: 'AA:BB', ext_key_usage: [CLIENT_AUTH] };
const service = {
  subject: { CN: 'coordinator' },
  fingerprint256: 'CC:DD',
  ext_key_usage: [SERVER_AUTH, CLIENT_AUTH],
};

describe('callerIdentity', () => {
  it.each([
    ['plaintext, nothing forwarded', {}, 'anonymous'],
    ['plaintext, forwarded (taken as given: nobody is authenticated)', { forwarded: 'bob' }, 'bob'],
    ['a submitter certificate: its CN', { cert: submitter }, 'alice'],
    [
      'a submitter certificate cannot speak for another client',
      { cert: submitter, forwarded: 'bob' },
      'alice',
    ],
    ['a service certificate forwarding a client: the client', { cert: service, forwarded: 'bob' }, 'bob'],
    ['a service certificate alone: its own CN', { cert: service }, 'coordinator'],
    ['a certificate without a CN: its fingerprint', { cert: { fingerprint256: 'EE:FF' } }, 'EE:FF'],
    [
      'an over-long forwarded identity is ignored',
      { cert: service, forwarded: 'x'.repeat(300) },
      'coordinator',
    ],
    ['an empty forwarded identity is ignored', { forwarded: '' }, 'anonymous'],
    ['an empty certificate object counts as none', { cert: {}, forwarded: 'bob' }, 'bob'],
  ] as const)('%s', (_name, opts, want) => {
    expect(callerIdentity(call(opts as Parameters<typeof call>[0]))).toBe(want);
  });

  it('survives a call without an auth context, or one that throws', () => {
    expect(callerIdentity({ metadata: new grpc.Metadata() })).toBe('anonymous');
    const throwing = {
      metadata: new grpc.Metadata(),
      getAuthContext: () => {
        throw new Error('closed');
      },
    };
    expect(callerIdentity(throwing)).toBe('anonymous');
  });
});
