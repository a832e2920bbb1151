package sopsfile

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	sops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
)

// EncryptOptions say what Encrypt encrypts, as .sops.yaml's creation
// rules do.
type EncryptOptions struct {
	// Recipients are the age recipients (age1…) that may decrypt the file.
	Recipients []string
	// EncryptedRegex, when set, encrypts only the values under keys that
	// match it; Kubernetes users write "^(data|stringData)$" so that a
	// Secret's apiVersion, kind and metadata stay readable.
	EncryptedRegex string
}

// sopsVersion is the sops release whose library writes the files.
const sopsVersion = "3.13.3"

// Encrypt encrypts a plain YAML or JSON file for opts.Recipients as
// `sops --encrypt --age …` does, with sops's own library: for tests, and
// for whoever makes fixtures without the sops CLI.
func Encrypt(plain []byte, format Format, opts EncryptOptions) ([]byte, error) {
	store := format.store()
	branches, err := store.LoadPlainFile(plain)
	if err != nil {
		return nil, fmt.Errorf("read the plain file: %w", err)
	}
	masters, err := sopsage.MasterKeysFromRecipients(strings.Join(opts.Recipients, ","))
	if err != nil {
		return nil, err
	}
	var group sops.KeyGroup
	dataKey := make([]byte, 32)
	if _, err := rand.Read(dataKey); err != nil {
		return nil, err
	}
	for _, mk := range masters {
		if err := mk.Encrypt(dataKey); err != nil {
			return nil, fmt.Errorf("encrypt the data key for %s: %w", mk.Recipient, err)
		}
		group = append(group, mk)
	}
	tree := sops.Tree{Branches: branches, Metadata: sops.Metadata{
		KeyGroups: []sops.KeyGroup{group}, EncryptedRegex: opts.EncryptedRegex, Version: sopsVersion,
	}}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		return nil, fmt.Errorf("encrypt the values: %w", err)
	}
	tree.Metadata.LastModified = time.Now().UTC().Truncate(time.Second)
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, fmt.Errorf("encrypt the MAC: %w", err)
	}
	return store.EmitEncryptedFile(tree)
}

// NewIdentity makes a fresh age identity: its private key, as age-keygen
// writes it in a key file, and its recipient.
func NewIdentity() (identity, recipient string, err error) {
	id, err := generateX25519()
	if err != nil {
		return "", "", err
	}
	return id.String(), id.Recipient().String(), nil
}
