package app

import (
	"slices"
	"testing"
)

func TestExpandBraces(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
		wantErr bool
	}{
		{"*.yaml", []string{"*.yaml"}, false},
		{"{a,b}", []string{"a", "b"}, false},
		{"{deploy.yaml,service.yaml}", []string{"deploy.yaml", "service.yaml"}, false},
		{"*.{yaml,yml,json}", []string{"*.yaml", "*.yml", "*.json"}, false},
		{"{a,b}/{c,d}", []string{"a/c", "a/d", "b/c", "b/d"}, false},
		{"{x,{y,z}w}", []string{"x", "yw", "zw"}, false},
		{"{,a}b", []string{"b", "ab"}, false},
		{`\{a,b\}`, []string{`\{a,b\}`}, false},
		{"[{]x", []string{"[{]x"}, false},
		{"{a,b", nil, true},
		{"a}", nil, true},
		{"{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}", nil, true}, // 512 patterns
	}
	for _, tt := range tests {
		got, err := ExpandBraces(tt.pattern)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("ExpandBraces(%q) = %q, %v; want %q, error %t", tt.pattern, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestValidateGlob(t *testing.T) {
	if err := ValidateGlob("{ok/*.yaml,[}"); err == nil {
		t.Error("ValidateGlob accepted a malformed alternative")
	}
}
