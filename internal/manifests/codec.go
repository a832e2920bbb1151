package manifests

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/ferry-gitops/ferry/internal/render"
)

// Set is a rendered manifest set.
type Set = []*unstructured.Unstructured

// payloadFormat is the first line of every encoded set; bump it when the
// encoding changes, so that older entries read as misses.
const payloadFormat = 2

// maxDecodedBytes bounds what Decode inflates, against a corrupt or hostile
// cache entry.
const maxDecodedBytes = 1 << 30

type header struct {
	Format     int    `json:"format"`
	Digest     string `json:"digest"`
	SourceType string `json:"sourceType,omitempty"`
	// PerApp marks an entry under Key that holds no set: the source is a
	// Helm chart, whose sets live under HelmKey, one per release.
	PerApp bool `json:"perApp,omitempty"`
	// Remote marks an entry under Key that holds no set: the source has
	// remote Kustomize bases, these, and its sets live under remoteKey,
	// one per combination of their commits.
	Remote []render.RemoteRef `json:"remote,omitempty"`
}

// Encode sorts a copy of objs (see Sort) and returns it gzip-compressed for the
// cache together with their digest: "sha256:" and the hex SHA-256 of the
// canonical JSON of the sorted objects (a JSON array, object keys sorted).
// The same manifests give the same digest, whatever order they came in.
func Encode(objs Set) (payload []byte, digest string, err error) {
	payload, digest, _, err = encode(objs, "")
	return payload, digest, err
}

// Decode reads a payload made by Encode, checking it against its digest.
func Decode(payload []byte) (Set, error) {
	objs, _, err := decode(payload)
	return objs, err
}

// Digest returns the digest Encode would give objs.
func Digest(objs Set) (string, error) {
	_, canonical, err := canonicalJSON(objs)
	if err != nil {
		return "", err
	}
	return digestOf(canonical), nil
}

func encode(objs Set, sourceType string) (payload []byte, digest string, sorted Set, err error) {
	return encodeHeader(objs, header{SourceType: sourceType})
}

// perAppMarker is the entry Loader keeps under Key for a Helm source.
func perAppMarker() []byte {
	payload, _, _, err := encodeHeader(nil, header{SourceType: render.SourceTypeHelm, PerApp: true})
	if err != nil {
		panic(err) // an empty set always encodes
	}
	return payload
}

func encodeHeader(objs Set, hdr header) (payload []byte, digest string, sorted Set, err error) {
	sorted, canonical, err := canonicalJSON(objs)
	if err != nil {
		return nil, "", nil, err
	}
	digest = digestOf(canonical)
	hdr.Format, hdr.Digest = payloadFormat, digest
	h, err := json.Marshal(hdr)
	if err != nil {
		return nil, "", nil, err
	}
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	for _, part := range [][]byte{h, {'\n'}, canonical} {
		if _, err := zw.Write(part); err != nil {
			return nil, "", nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, "", nil, err
	}
	return buf.Bytes(), digest, sorted, nil
}

// gzipWriters and gzipReaders hold compressors for reuse: a new gzip
// writer allocates about 800 KiB of state, and every render, cache read
// and cache write of a fleet's onboarding made one.
var (
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	gzipReaders sync.Pool
)

func decode(payload []byte) (Set, header, error) {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(payload))
	} else {
		err = zr.Reset(bytes.NewReader(payload))
	}
	if err != nil {
		return nil, header{}, fmt.Errorf("decode manifests: %w", err)
	}
	defer gzipReaders.Put(zr)
	br := bufio.NewReader(io.LimitReader(zr, maxDecodedBytes+1))
	line, err := br.ReadBytes('\n')
	if err != nil {
		return nil, header{}, fmt.Errorf("decode manifests: header: %w", err)
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, header{}, fmt.Errorf("decode manifests: header: %w", err)
	}
	if h.Format != payloadFormat {
		return nil, header{}, fmt.Errorf("decode manifests: format %d, want %d", h.Format, payloadFormat)
	}
	canonical, err := io.ReadAll(br)
	if err != nil {
		return nil, header{}, fmt.Errorf("decode manifests: %w", err)
	}
	if len(canonical)+len(line) > maxDecodedBytes {
		return nil, header{}, fmt.Errorf("decode manifests: larger than %d bytes", maxDecodedBytes)
	}
	if got := digestOf(canonical); got != h.Digest {
		return nil, header{}, fmt.Errorf("decode manifests: digest %s does not match the content (%s)", h.Digest, got)
	}
	var items []map[string]any
	if err := utiljson.Unmarshal(canonical, &items); err != nil {
		return nil, header{}, fmt.Errorf("decode manifests: %w", err)
	}
	objs := make(Set, len(items))
	for i, m := range items {
		if m == nil {
			return nil, header{}, errors.New("decode manifests: null object")
		}
		objs[i] = &unstructured.Unstructured{Object: m}
	}
	return objs, h, nil
}

// Sort orders objects by API group, kind, namespace and name, then by
// content, which makes the order of a set independent of the files and
// documents its objects came from.
func Sort(objs Set) error {
	_, _, err := sortWithJSON(objs)
	return err
}

func sortWithJSON(objs Set) (Set, [][]byte, error) {
	type entry struct {
		obj             *unstructured.Unstructured
		group, kind     string
		namespace, name string
		json            []byte
	}
	entries := make([]entry, len(objs))
	for i, o := range objs {
		b, err := json.Marshal(o.Object)
		if err != nil {
			return nil, nil, fmt.Errorf("encode %s/%s: %w", o.GetKind(), o.GetName(), err)
		}
		group, _, _ := strings.Cut(o.GetAPIVersion(), "/")
		if !strings.Contains(o.GetAPIVersion(), "/") {
			group = "" // the core group: "v1"
		}
		entries[i] = entry{o, group, o.GetKind(), o.GetNamespace(), o.GetName(), b}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.group != b.group {
			return a.group < b.group
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return bytes.Compare(a.json, b.json) < 0
	})
	jsons := make([][]byte, len(entries))
	for i, e := range entries {
		objs[i], jsons[i] = e.obj, e.json
	}
	return objs, jsons, nil
}

// canonicalJSON sorts a copy of objs and encodes it as a JSON array;
// encoding/json writes map keys sorted, so equal objects encode equally.
func canonicalJSON(objs Set) (Set, []byte, error) {
	sorted, jsons, err := sortWithJSON(append(Set(nil), objs...))
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, b := range jsons {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	return sorted, buf.Bytes(), nil
}

func digestOf(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}
