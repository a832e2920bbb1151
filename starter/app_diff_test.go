package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestDiffRenderErrorSaysPluginsRunOnlyOnWorkers(t *testing.T) {
	cause := errors.New(`render .: spec.source.plugin.name: no plugin "cmp" on this worker`)
	plain := app.Source{RepoURL: "https://git.example/team/repo.git"}
	err := diffRenderError(plain, "0123456789abcdef", cause)
	require.ErrorIs(t, err, cause)
	require.NotContains(t, err.Error(), "config-management plugins")

	withPlugin := plain
	withPlugin.Plugin = &app.PluginSource{Name: "cmp"}
	err = diffRenderError(withPlugin, "0123456789abcdef", cause)
	require.ErrorIs(t, err, cause)
	require.Contains(t, err.Error(), "the ferry CLI runs no config-management plugins")
	require.Contains(t, err.Error(), "--redis-addr")
}
