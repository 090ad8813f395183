// Verify a Sigstore bundle with a PEM public key, offline, using sigstore-js.
// Usage: node sigstore_verify.js BUNDLE.json PUBLIC.pem
// Trust material: an empty trusted root (no CAs, no logs) and a key selector that
// returns the given key; no tlog entry, SCT or timestamp is required.
'use strict';
const fs = require('fs');
const crypto = require('crypto');
const { bundleFromJSON } = require('@sigstore/bundle');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

const [bundlePath, keyPath] = process.argv.slice(2);
const emptyRoot = {
  mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
  tlogs: [],
  certificateAuthorities: [],
  ctlogs: [],
  timestampAuthorities: [],
};
try {
  const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundlePath, 'utf8')));
  const pem = fs.readFileSync(keyPath, 'utf8');
  const trust = toTrustMaterial(emptyRoot, (hint) => ({
    publicKey: crypto.createPublicKey(pem),
    validFor: () => true,
  }));
  const verifier = new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 });
  verifier.verify(toSignedEntity(bundle));
  console.log('sigstore-js: verified');
} catch (err) {
  console.log(`sigstore-js: REJECTED ${err.code || err.name}: ${err.message}`);
  process.exit(1);
}
