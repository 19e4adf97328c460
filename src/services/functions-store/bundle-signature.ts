// Signed deploys (docs/functions-deploy.md § Signed deploys; docs/security.md § Roles). A bundle carries
// the signature of whoever deployed it: their certificate (PEM) and a signature, by its key, over the
// bundle format and the bundle's 64-digit digest (which covers every file's name and source). A Worker
// whose cluster has a CA (TLS on) runs a bundle only when the certificate was issued by that CA, is valid
// now, holds the deployer or admin role, and the signature verifies; anything else — unsigned, signed by
// a submitter, written into etcd by a process holding only the Workers' credentials, or changed after
// signing — is refused, and the Worker keeps the version it serves. Without a CA nothing can be checked,
// so nothing is (as with every identity on a plaintext cluster).
import { createPrivateKey, sign, verify, X509Certificate } from 'node:crypto';
import { rolesOfX509 } from '../../kernel/roles.js';
import type { Bundle } from './bundle.js';
import { FunctionsStoreError, FunctionsStoreErrorCode } from './errors.js';

export interface BundleSignature {
  /** The signer's certificate, PEM. */
  readonly certificate: string;
  /** Base64 signature over signedText(digest) by the certificate's key. */
  readonly value: string;
}

/** What a deploy signs with: the deployer's TLS certificate and key (PEM). */
export interface BundleSigner {
  readonly cert: string;
  readonly key: string;
}

/** Longest certificate and signature a stored bundle may carry (a chain of a few certificates). */
export const MAX_SIGNATURE_CERTIFICATE_CHARS = 32 * 1024;
export const MAX_SIGNATURE_VALUE_CHARS = 2 * 1024;

/** The bytes signed: a domain label, so the signature cannot be replayed for anything else. */
function signedBytes(digest: string): Buffer {
  return Buffer.from(`blockx.functions.bundle.signature/1\n${digest}`, 'utf8');
}

/** Signs `digest` with `signer` (the key's own algorithm: SHA-256 with RSA or ECDSA, or Ed25519). */
export function signBundleDigest(digest: string, signer: BundleSigner): BundleSignature {
  const key = createPrivateKey(signer.key);
  const algorithm =
    key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448' ? null : 'sha256';
  return { certificate: signer.cert, value: sign(algorithm, signedBytes(digest), key).toString('base64') };
}

/** The roles a deploy's signer must hold one of. */
const DEPLOY_ROLES = ['deployer', 'admin'] as const;

/**
 * Why a bundle with `digest` and `signature` may not run on a cluster whose CA is `caPem`, at `nowMs`;
 * undefined when it may. Every reason names the rule and what to do.
 */
export function bundleSignatureProblem(
  digest: string,
  signature: BundleSignature | undefined,
  caPem: string,
  nowMs: number,
): string | undefined {
  if (signature === undefined)
    return (
      'it is not signed: this cluster has a CA, so a bundle must be signed by a certificate holding the ' +
      'deployer or admin role (`blockx functions deploy` signs with tls.cert / tls.key)'
    );
  let cert: X509Certificate;
  let ca: X509Certificate;
  try {
    cert = new X509Certificate(signature.certificate);
    ca = new X509Certificate(caPem);
  } catch {
    return "its signer's certificate is not a readable PEM certificate";
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey))
    return `it is signed by "${cert.subject.replace(/\n/g, ', ')}", which the cluster CA did not issue`;
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  if (!(nowMs >= from && nowMs <= to))
    return `its signer's certificate is not valid now (valid ${cert.validFrom} to ${cert.validTo})`;
  const roles = rolesOfX509(cert);
  if (!roles.some((r) => (DEPLOY_ROLES as readonly string[]).includes(r)))
    return (
      `it is signed by "${cert.subject.replace(/\n/g, ', ')}", which holds ${roles.length > 0 ? roles.join(', ') : 'no role'}, ` +
      'not deployer or admin (docs/security.md § Roles)'
    );
  return signatureVerifies(cert, digest, signature.value)
    ? undefined
    : 'its signature does not match its files (changed after it was signed)';
}

function signatureVerifies(cert: X509Certificate, digest: string, value: string): boolean {
  try {
    const algorithm = cert.publicKey.asymmetricKeyType?.startsWith('ed') ? null : 'sha256';
    return verify(algorithm, signedBytes(digest), cert.publicKey, Buffer.from(value, 'base64'));
  } catch {
    return false;
  }
}

/**
 * A check for the Worker's code view: throws BUNDLE_UNTRUSTED (naming the version and why) for a bundle
 * that may not run on a cluster whose CA is `caPem` (bundleSignatureProblem).
 */
export function trustedBundleCheck(caPem: string, clock: () => number = Date.now): (bundle: Bundle) => void {
  return (bundle) => {
    const problem = bundleSignatureProblem(bundle.digest, bundle.signature, caPem, clock());
    if (problem !== undefined)
      throw new FunctionsStoreError(
        FunctionsStoreErrorCode.BUNDLE_UNTRUSTED,
        `bundle ${bundle.version}: ${problem}`,
        {
          version: bundle.version,
        },
      );
  };
}
