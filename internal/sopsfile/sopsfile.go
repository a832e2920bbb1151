package sopsfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sops "github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/logging"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"sigs.k8s.io/yaml"
)

func init() {
	// sops logs each key it tries (and an encrypted comment it could not
	// open) on standard error; Ferry's errors say what matters.
	logging.SetLevel(logrus.PanicLevel)
}

// Format is how a file is written: SOPS keeps its metadata and values in
// the file's own syntax.
type Format int

const (
	YAML Format = iota
	JSON
)

// FormatOf is the format of a file by its name, as sops chooses it:
// .json is JSON, anything else YAML.
func FormatOf(name string) Format {
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		return JSON
	}
	return YAML
}

func (f Format) store() interface {
	LoadEncryptedFile([]byte) (sops.Tree, error)
	LoadPlainFile([]byte) (sops.TreeBranches, error)
	EmitPlainFile(sops.TreeBranches) ([]byte, error)
	EmitEncryptedFile(sops.Tree) ([]byte, error)
} {
	if f == JSON {
		return sopsjson.NewStore(&config.JSONStoreConfig{})
	}
	return sopsyaml.NewStore(&config.YAMLStoreConfig{})
}

// IsEncrypted tells whether data is a SOPS-encrypted YAML or JSON file: a
// document whose top level has a "sops" mapping with the file's MAC, as
// the sops CLI writes it. A file that does not parse is not one.
func IsEncrypted(data []byte) bool {
	if !bytes.Contains(data, []byte("sops")) || !bytes.Contains(data, []byte("mac")) {
		return false
	}
	var doc struct {
		SOPS *struct {
			MAC string `json:"mac"`
		} `json:"sops"`
	}
	first, _, _ := bytes.Cut(data, []byte("\n---"))
	if yaml.Unmarshal(first, &doc) != nil {
		return false
	}
	return doc.SOPS != nil && doc.SOPS.MAC != ""
}

// Plain is a decrypted file.
type Plain struct {
	// Data is the file without its SOPS metadata, every value in clear.
	Data []byte
	// Values are the values that were encrypted, in clear: whatever
	// shows them must mask them.
	Values []string
}

// KeyError says that no identity of the worker's opens a file.
type KeyError struct {
	// Recipients are the file's age recipients, then its keys of other
	// kinds (KMS, PGP, Vault) as "kind key".
	Recipients []string
}

func (e *KeyError) Error() string {
	if len(e.Recipients) == 0 {
		return "SOPS: the file names no key to decrypt it with"
	}
	return "SOPS: no age identity of the worker opens the file, which is encrypted for " + strings.Join(e.Recipients, ", ") +
		": give the worker the age identity of one of these recipients (--sops-age-key-file), or encrypt the file again for the worker's recipient" +
		" (only age keys are used: KMS, PGP and Vault keys need network access the render sandbox does not have)"
}

// ErrNoKeys says that the worker has no age identities at all.
var ErrNoKeys = errors.New("SOPS: the file is encrypted, and this worker has no age identities to decrypt it with: " +
	"ask the operator to give the worker its age key file (--sops-age-key-file)")

// Decrypt opens a SOPS-encrypted file with keys: its data key by one of
// keys' identities (or by enough key groups' of them, for a file split
// with Shamir), then every value with sops's AES-GCM cipher, checked
// against the file's MAC. No error shows a value or a key: a missing key
// is a *KeyError naming the file's recipients.
func Decrypt(data []byte, format Format, keys *Keys) (*Plain, error) {
	store := format.store()
	tree, err := store.LoadEncryptedFile(data)
	if err != nil {
		return nil, fmt.Errorf("SOPS: the file does not read as a SOPS-encrypted %s file: %s", format.name(), firstLine(err))
	}
	if len(tree.Metadata.KeyGroups) == 0 {
		return nil, &KeyError{}
	}
	if keys == nil || len(keys.ids) == 0 {
		return nil, ErrNoKeys
	}
	dataKey, err := tree.Metadata.GetDataKeyWithKeyServices([]keyservice.KeyServiceClient{ageService{keys}}, nil)
	if err != nil {
		return nil, &KeyError{Recipients: recipients(tree.Metadata)}
	}
	encrypted := leaves(tree.Branches, func(v any) bool {
		s, ok := v.(string)
		return ok && strings.HasPrefix(s, "ENC[")
	})
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(dataKey, cipher)
	if err != nil {
		// sops's message may quote a value it could not convert.
		return nil, errors.New("SOPS: a value does not decrypt with the file's data key: the file was changed after it was encrypted; edit it with sops, not by hand")
	}
	fileMAC, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil || fileMAC != mac {
		return nil, errors.New("SOPS: the file's MAC does not match its values: the file was changed after it was encrypted; edit it with sops, not by hand")
	}
	out, err := store.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, fmt.Errorf("SOPS: write the decrypted file: %s", firstLine(err))
	}
	var values []string
	i := 0
	leaves(tree.Branches, func(v any) bool {
		if i < len(encrypted) && encrypted[i] {
			s := fmt.Sprint(v)
			if c, ok := v.(sops.Comment); ok {
				s = c.Value
			}
			if s != "" {
				values = append(values, s)
			}
		}
		i++
		return false
	})
	return &Plain{Data: out, Values: values}, nil
}

func (f Format) name() string {
	if f == JSON {
		return "JSON"
	}
	return "YAML"
}

// firstLine is an error's first line: enough to say what went wrong.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// leaves walks the values of branches in order, comments left out, and
// gives what pick says of each.
func leaves(branches sops.TreeBranches, pick func(any) bool) []bool {
	var out []bool
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case sops.TreeBranch:
			for _, item := range v {
				if _, comment := item.Key.(sops.Comment); !comment {
					walk(item.Value)
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		default:
			// A value, or a comment in a list, which sops may decrypt
			// from a string into a Comment: a leaf either way, so that
			// the walks before and after decryption stay aligned.
			out = append(out, pick(v))
		}
	}
	for _, b := range branches {
		walk(b)
	}
	return out
}

// recipients names a file's keys: age recipients first, then the others.
func recipients(m sops.Metadata) []string {
	var ages, others []string
	for _, group := range m.KeyGroups {
		for _, k := range group {
			if a, ok := k.(*sopsage.MasterKey); ok {
				ages = append(ages, a.Recipient)
				continue
			}
			others = append(others, k.TypeToIdentifier()+" "+k.ToString())
		}
	}
	return append(ages, others...)
}

// ageService is a sops key service that opens age-encrypted data keys
// with the worker's identities, and nothing else: no KMS, no PGP agent,
// no key file or command of the process's environment.
type ageService struct{ keys *Keys }

var _ keyservice.KeyServiceClient = ageService{}

func (s ageService) Decrypt(_ context.Context, req *keyservice.DecryptRequest, _ ...grpc.CallOption) (*keyservice.DecryptResponse, error) {
	ak := req.GetKey().GetAgeKey()
	if ak == nil {
		return nil, errors.New("not an age key")
	}
	mk := &sopsage.MasterKey{Recipient: ak.Recipient, EncryptedKey: string(req.GetCiphertext())}
	sopsage.ParsedIdentities(s.keys.ids).ApplyToMasterKey(mk)
	plain, err := mk.Decrypt()
	if err != nil {
		return nil, err
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

func (ageService) Encrypt(context.Context, *keyservice.EncryptRequest, ...grpc.CallOption) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("the worker only decrypts")
}
