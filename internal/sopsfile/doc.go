// Package sopsfile decrypts files that SOPS encrypted for age recipients,
// as a render meets them in Git: Kubernetes manifests (Flux's and KSOPS's
// users commit Secrets so), Helm value files (helm-secrets'). It uses
// sops's own library for the file format (its YAML and JSON stores, its
// AES-GCM cipher, its MAC and Shamir key groups) and opens the data key
// with the worker's age identities only (Keys): no KMS, PGP or Vault key,
// which would need the network a render sandbox does not have, and nothing
// of the process's environment (SOPS_AGE_KEY_FILE and the like).
//
//	keys, err := sopsfile.ReadKeyFile("/etc/ferry/sops/keys.txt", "--sops-age-key-file")
//	if sopsfile.IsEncrypted(data) {
//		plain, err := sopsfile.Decrypt(data, sopsfile.FormatOf(name), keys)
//		// plain.Data: the file in clear; plain.Values: what to mask.
//	}
//
// The sops library brings every key service sops knows (its root package
// imports them all); Ferry links them but calls none.
package sopsfile
