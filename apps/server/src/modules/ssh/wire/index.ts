export { SshKeyError, SshReader, SshWriter, mpintBody } from "./ssh-wire";
export {
  SSH_KEY_ALGORITHMS,
  algorithmOfKeyObject,
  fingerprintSha256,
  generateSshKeyPair,
  generateSshKeyPairAsync,
  keyTypeOfBlob,
  opensshPrivateKey,
  parsePublicKeyBlob,
  parsePublicKeyLine,
  publicBlobOf,
  publicKeyLineOf,
  type ParsedPublicKeyLine,
  type SshKeyAlgorithm,
  type SshKeyPair,
  type SshPublicKey,
  type SshPublicKeyType,
} from "./ssh-keys";
export {
  DEFAULT_USER_EXTENSIONS,
  certTypeName,
  randomSerial,
  signCertificate,
  type SignCertificateInput,
  type SshCertType,
} from "./ssh-cert";
export { buildKrl, isKrl, type BuildKrlInput } from "./ssh-krl";
