package render

import (
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/sopsfile"
)

// SOPS-encrypted files are decrypted where a render reads them, inside
// the render (and so inside its sandbox), with Renderer.SOPS:
//
//   - a directory source's manifest files (directory.go), as Flux
//     decrypts the Secrets a Kustomization applies;
//   - every file kustomize reads (repoFS.ReadFile), so that a
//     kustomization may list encrypted manifests among its resources; and
//     KSOPS generators (kustomize_ksops.go);
//   - Helm value files, named as helm-secrets users name them
//     (secrets://secrets.yaml) or not (helm_values.go).
//
// The values in clear stay in the render's memory: its output, which the
// manifest cache holds sealed, carries them only in the objects the files
// held; every error is masked with them (secretScan.sops).

// decryptFile gives data in clear when it is a SOPS-encrypted file, and
// data itself otherwise. display names the file in errors.
func decryptFile(keys *sopsfile.Keys, display string, data []byte) ([]byte, error) {
	if !sopsfile.IsEncrypted(data) {
		return data, nil
	}
	plain, err := sopsfile.Decrypt(data, sopsfile.FormatOf(display), keys)
	if err != nil {
		return nil, &SourceError{Path: display, Msg: err.Error(), Err: err}
	}
	return plain.Data, nil
}

// decryptValueFile is decryptFile for a Helm value file, which helm-secrets
// users name secrets://path (named): such a file must be encrypted.
func decryptValueFile(keys *sopsfile.Keys, display string, data []byte, named bool) ([]byte, error) {
	if named && !sopsfile.IsEncrypted(data) {
		return nil, &SourceError{Path: display, Msg: "named with " + app.SecretsValueFilePrefix +
			" in spec.source.helm.valueFiles, but not encrypted with SOPS: encrypt it with sops for the worker's age recipient, or drop the prefix"}
	}
	return decryptFile(keys, display, data)
}

// sopsValues are the values in clear of a SOPS-encrypted file, for the
// secret scan; none when data is not one or does not open.
func sopsValues(keys *sopsfile.Keys, name string, data []byte) ([]byte, []string) {
	if !sopsfile.IsEncrypted(data) {
		return data, nil
	}
	plain, err := sopsfile.Decrypt(data, sopsfile.FormatOf(name), keys)
	if err != nil {
		return data, nil
	}
	return plain.Data, plain.Values
}
