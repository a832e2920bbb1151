package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sopsfile"
)

// loadPlugins reads --plugin-dir's ConfigManagementPlugin files; a bad
// file stops the worker with every problem, each naming the file and the
// field.
func loadPlugins(cfg *config) ([]*render.Plugin, error) {
	if cfg.render.pluginDir == "" {
		return nil, nil
	}
	plugins, err := render.LoadPlugins(cfg.render.pluginDir)
	if err != nil {
		return nil, fmt.Errorf("--plugin-dir %s: %w", cfg.render.pluginDir, err)
	}
	slog.Info("config-management plugins", "dir", cfg.render.pluginDir, "plugins", strings.Join(pluginNames(plugins), ","))
	return plugins, nil
}

// pluginNames are the plugins' full names, as spec.source.plugin.name
// and --plugin-egress give them.
func pluginNames(plugins []*render.Plugin) []string {
	names := make([]string, len(plugins))
	for i, p := range plugins {
		names[i] = p.FullName()
	}
	return names
}

// egressFlag is --plugin-egress: its values as given, each PLUGIN=HOSTS
// (hosts comma-separated, so not split on commas as other lists are;
// several plugins in one value separated by ';', as its environment
// twin holds them).
type egressFlag []string

func (f *egressFlag) String() string { return strings.Join(*f, ";") }
func (f *egressFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// loadSOPSKeys reads the age identities of --sops-age-key-file, once at
// start: a new key file takes a restart. Only their public recipients are
// logged.
func loadSOPSKeys(cfg *config) (*sopsfile.Keys, error) {
	if cfg.render.sopsAgeKeyFile == "" {
		return nil, nil
	}
	keys, err := sopsfile.ReadKeyFile(cfg.render.sopsAgeKeyFile, "--sops-age-key-file")
	if err != nil {
		return nil, err
	}
	slog.Info("SOPS age identities", "file", cfg.render.sopsAgeKeyFile, "recipients", strings.Join(keys.Recipients(), ","))
	return keys, nil
}
