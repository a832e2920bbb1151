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

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.yaml", "deploy.yaml", true},
		{"*.yaml", "sub/deploy.yaml", false}, // '*' stops at '/', as in path.Match
		{"{deploy.yaml,service.yaml}", "service.yaml", true},
		{"{deploy.yaml,service.yaml}", "ingress.yaml", false},
		{"*.{yml,json}", "a.json", true},
		{"{deploy/*.yaml,*.yml}", "deploy/x.yaml", true},
		{"[._]*", ".hidden", true},
	}
	for _, tt := range tests {
		got, err := MatchGlob(tt.pattern, tt.name)
		if err != nil || got != tt.want {
			t.Errorf("MatchGlob(%q, %q) = %t, %v; want %t", tt.pattern, tt.name, got, err, tt.want)
		}
	}
	if _, err := MatchGlob("[a-", "x"); err == nil {
		t.Error("MatchGlob accepted a malformed class")
	}
	if err := ValidateGlob("{ok/*.yaml,[}"); err == nil {
		t.Error("ValidateGlob accepted a malformed alternative")
	}
}
