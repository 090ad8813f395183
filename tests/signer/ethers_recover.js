// Recover the signer of an EIP-712 signature with ethers v6, an implementation independent
// of eth-account. Usage: node ethers_recover.js ANSWER.json  (the signer's granted answer)
// Prints the recovered address.
'use strict';
const fs = require('fs');
const { verifyTypedData } = require('ethers');

const answer = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { domain, message } = answer.typed_data;
const types = { ...answer.typed_data.types };
delete types.EIP712Domain; // ethers derives the domain type from the domain object
console.log(verifyTypedData(domain, types, message, answer.signature));
