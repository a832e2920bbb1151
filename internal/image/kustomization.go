package image

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// PinDigest sets the digest of the images: entry named imageName in the
// kustomization at path to digest (sha256:…), dropping its newTag: the
// workers then run exactly the image built, whichever registry holds a
// copy of it (newName stays the operator's). Comments and the rest of the
// file stay.
func PinDigest(path, imageName, digest string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("pin image %s: %w", imageName, err)
	}
	node, err := yaml.Parse(string(data))
	if err != nil {
		return fmt.Errorf("pin image %s in %s: %w", imageName, path, err)
	}
	images, err := node.Pipe(yaml.Lookup("images"))
	if err != nil || images == nil {
		return fmt.Errorf("pin image %s in %s: no images: list; add an entry with name: %s and newName: your registry's repository", imageName, path, imageName)
	}
	entry, err := images.Pipe(yaml.MatchElement("name", imageName))
	if err != nil || entry == nil {
		return fmt.Errorf("pin image %s in %s: images: has no entry named %s; add one with newName: your registry's repository", imageName, path, imageName)
	}
	if err := entry.PipeE(yaml.Clear("newTag")); err != nil {
		return fmt.Errorf("pin image %s in %s: %w", imageName, path, err)
	}
	if err := entry.PipeE(yaml.SetField("digest", yaml.NewStringRNode(digest))); err != nil {
		return fmt.Errorf("pin image %s in %s: %w", imageName, path, err)
	}
	// The file's own sequence indentation, not kyaml's compact one.
	out, err := yaml.MarshalWithOptions(node.Document(), &yaml.EncoderOptions{
		SeqIndent: yaml.SequenceIndentStyle(yaml.DeriveSeqIndentStyle(string(data)))})
	if err != nil {
		return fmt.Errorf("pin image %s in %s: %w", imageName, path, err)
	}
	return os.WriteFile(path, out, 0o644)
}
