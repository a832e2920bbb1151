package manifests

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind, namespace, name string, extra map[string]any) *unstructured.Unstructured {
	m := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}
	if namespace != "" {
		m["metadata"].(map[string]any)["namespace"] = namespace
	}
	for k, v := range extra {
		m[k] = v
	}
	return &unstructured.Unstructured{Object: m}
}

func sampleSet() Set {
	return Set{
		obj("apps/v1", "Deployment", "shop", "web", map[string]any{"spec": map[string]any{"replicas": int64(2)}}),
		obj("v1", "Service", "shop", "web", nil),
		obj("v1", "Namespace", "", "shop", nil),
		obj("v1", "ConfigMap", "shop", "web", map[string]any{"data": map[string]any{"z": "1", "a": "2"}}),
	}
}

func kinds(objs Set) string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return strings.Join(out, " ")
}

func TestEncodeDecode(t *testing.T) {
	payload, digest, err := Encode(sampleSet())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		t.Fatalf("digest = %q", digest)
	}
	got, err := Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	// Core group first, then apps; by kind within a group.
	if want := "ConfigMap/web Namespace/shop Service/web Deployment/web"; kinds(got) != want {
		t.Fatalf("decoded order %q, want %q", kinds(got), want)
	}
	if r, _, _ := unstructured.NestedInt64(got[3].Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas = %d after a round trip, want int64 2", r)
	}
	again, err := Digest(got)
	if err != nil || again != digest {
		t.Errorf("Digest of the decoded set = %s, %v; want %s", again, err, digest)
	}
}

func TestDigestIgnoresOrder(t *testing.T) {
	a, b := sampleSet(), sampleSet()
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	_, da, _ := Encode(a)
	_, db, _ := Encode(b)
	if da != db {
		t.Fatal("the same objects in another order give another digest")
	}
	changed := sampleSet()
	changed[3].Object["data"].(map[string]any)["a"] = "3"
	if _, dc, _ := Encode(changed); dc == da {
		t.Fatal("changed content, same digest")
	}
	var empty Set
	_, de, err := Encode(empty)
	if err != nil || de == da {
		t.Fatalf("empty set: %s, %v", de, err)
	}
}

func TestEncodeLeavesInputAlone(t *testing.T) {
	in := sampleSet()
	before := kinds(in)
	if _, _, err := Encode(in); err != nil {
		t.Fatal(err)
	}
	if kinds(in) != before {
		t.Fatal("Encode reordered its input")
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	payload, _, err := Encode(sampleSet())
	if err != nil {
		t.Fatal(err)
	}
	tampered := func(change func(header map[string]any, body []byte) []byte) []byte {
		zr, _ := gzip.NewReader(bytes.NewReader(payload))
		var plain bytes.Buffer
		_, _ = plain.ReadFrom(zr)
		line, body, _ := bytes.Cut(plain.Bytes(), []byte("\n"))
		var h map[string]any
		_ = json.Unmarshal(line, &h)
		body = change(h, body)
		hb, _ := json.Marshal(h)
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		_, _ = zw.Write(append(append(hb, '\n'), body...))
		_ = zw.Close()
		return out.Bytes()
	}
	tests := map[string][]byte{
		"not gzip":  []byte("hello"),
		"truncated": payload[:len(payload)/2],
		"content changed": tampered(func(h map[string]any, b []byte) []byte {
			return bytes.Replace(b, []byte(`"web"`), []byte(`"evil"`), 1)
		}),
		"other format": tampered(func(h map[string]any, b []byte) []byte { h["format"] = 99; return b }),
	}
	for name, p := range tests {
		if _, err := Decode(p); err == nil {
			t.Errorf("%s: Decode accepted it", name)
		}
	}
}

func TestSort(t *testing.T) {
	set := Set{
		obj("v1", "ConfigMap", "b", "x", nil),
		obj("v1", "ConfigMap", "a", "y", nil),
		obj("v1", "ConfigMap", "a", "x", map[string]any{"data": map[string]any{"k": "2"}}),
		obj("v1", "ConfigMap", "a", "x", map[string]any{"data": map[string]any{"k": "1"}}),
	}
	if err := Sort(set); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range set {
		d, _, _ := unstructured.NestedString(o.Object, "data", "k")
		got = append(got, o.GetNamespace()+"/"+o.GetName()+d)
	}
	if want := []string{"a/x1", "a/x2", "a/y", "b/x"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Sort: %v, want %v", got, want)
	}
}
