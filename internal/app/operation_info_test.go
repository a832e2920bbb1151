package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseOperationInfo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pairs []string
		want  []Info
		err   string
	}{
		{name: "Argo CD's test", pairs: []string{"name1=val1", "name2=val2"}, want: []Info{{"name1", "val1"}, {"name2", "val2"}}},
		{name: "empty value", pairs: []string{"ticket="}, want: []Info{{"ticket", ""}}},
		{name: "value with =", pairs: []string{"build=https://ci/run?id=7"}, want: []Info{{"build", "https://ci/run?id=7"}}},
		{name: "last value wins", pairs: []string{"a=1", "b=2", "a=3"}, want: []Info{{"a", "3"}, {"b", "2"}}},
		{name: "none", pairs: nil, want: nil},
		{name: "no =", pairs: []string{"name1"}, err: `"name1": want name=value`},
		{name: "empty name", pairs: []string{"=val"}, err: `"=val": the name is empty: want name=value`},
		{name: "space in name", pairs: []string{"my name=v"}, err: `"my name=v": a name holds no white space`},
		{name: "every error", pairs: []string{"x", "=y"}, err: "\"x\": want name=value\n\"=y\": the name is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseOperationInfo(tc.pairs)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.NoError(t, ValidateOperationInfo(got))
		})
	}
}

func TestValidateOperationInfo(t *testing.T) {
	require.NoError(t, ValidateOperationInfo(nil))
	err := ValidateOperationInfo([]Info{{"", "v"}, {"a", "1"}, {"a", "2"}})
	require.ErrorContains(t, err, `info[0] "": the name is empty`)
	require.ErrorContains(t, err, `info[2] "a": the name is given again (info[1])`)
}
