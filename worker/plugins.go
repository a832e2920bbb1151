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
	names := make([]string, len(plugins))
	for i, p := range plugins {
		names[i] = p.FullName()
	}
	slog.Info("config-management plugins", "dir", cfg.render.pluginDir, "plugins", strings.Join(names, ","))
	return plugins, nil
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
