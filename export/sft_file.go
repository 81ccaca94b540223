package export

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coworkenv/coworkenv/internal/atomicfile"
	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// DatasetInfo is the name of the file in which LLaMA-Factory looks up its datasets (in its
// dataset_dir).
const DatasetInfo = "dataset_info.json"

// datasetInfoMax is the largest dataset_info.json SFTFile reads (LLaMA-Factory's own is a few
// tens of KiB).
const datasetInfoMax = 16 << 20

// SFTFile is the output of `export sft`: a JSON Lines file of rows and, for the llamafactory
// format, the dataset's entry in the dataset_info.json beside it (merged into the file when it
// exists: the other entries stay as they are, an entry of the same name is replaced). Nothing
// is written before Commit, which renames each file into place whole (the rows first).
type SFTFile struct {
	f     *AtomicFile
	shape SFTShape
	info  string // the path of dataset_info.json, "" for the other formats
	name  string // the dataset's name in it
	file  string // the rows' file name, relative to it
}

// CreateSFT starts writing the rows of shape to path. For the llamafactory format it also
// checks that the dataset_info.json beside path, if there is one, is a JSON object.
func CreateSFT(path string, shape SFTShape) (*SFTFile, error) {
	s := &SFTFile{shape: shape}
	if shape.Format == FormatLlamaFactory {
		s.file = filepath.Base(path)
		if s.file == DatasetInfo {
			return nil, fmt.Errorf("--out: %s is where the dataset's entry goes; name the rows' file otherwise", DatasetInfo)
		}
		s.name = strings.TrimSuffix(s.file, filepath.Ext(s.file))
		if s.name == "" {
			s.name = s.file
		}
		s.info = filepath.Join(filepath.Dir(path), DatasetInfo)
		if _, err := readDatasetInfo(s.info); err != nil {
			return nil, err
		}
	}
	f, err := CreateAtomic(path)
	if err != nil {
		return nil, fmt.Errorf("--out: %v", err)
	}
	s.f = f
	return s, nil
}

// Add writes the row of one episode; system is its system message ("" when none).
func (s *SFTFile) Add(e *Episode, system string) error {
	row, err := SFTRow(e, system, s.shape)
	if err != nil {
		return fmt.Errorf("%s: %v", e.Path, err)
	}
	return s.f.WriteLine(row)
}

// Commit renames the rows into place and, for the llamafactory format, then the dataset_info.json
// with the dataset's entry (read again now, so that changes made to it meanwhile are kept).
func (s *SFTFile) Commit() error {
	if s.info == "" {
		return s.f.Commit()
	}
	info, err := readDatasetInfo(s.info)
	if err != nil {
		s.f.Abort()
		return err
	}
	info.Set(s.name, LlamaFactoryEntry(s.file))
	data, err := jsonv.Indent(info)
	if err != nil {
		s.f.Abort()
		return err
	}
	infoFile, err := atomicfile.Create(s.info)
	if err != nil {
		s.f.Abort()
		return pathError(err)
	}
	infoFile.Write(append(data, '\n'))
	if err := s.f.Commit(); err != nil {
		infoFile.Abort()
		return err
	}
	if err := infoFile.Commit(); err != nil {
		return fmt.Errorf("%s: %v (the rows were written, the entry %q was not)", s.info, err, s.name)
	}
	return nil
}

// Abort drops what was written.
func (s *SFTFile) Abort() { s.f.Abort() }

// LlamaFactoryEntry is the dataset_info.json entry of rows of the llamafactory format in file
// (relative to the dataset_info.json): the sharegpt formatting, the three columns a row has, and
// every tag spelt out (LLaMA-Factory's defaults, written so that the entry says what it reads).
func LlamaFactoryEntry(file string) *jsonv.Object {
	return jsonv.NewObject(
		"file_name", file,
		"formatting", "sharegpt",
		"columns", jsonv.NewObject("messages", "conversations", "system", "system", "tools", "tools"),
		"tags", jsonv.NewObject(
			"role_tag", "from",
			"content_tag", "value",
			"user_tag", "human",
			"assistant_tag", "gpt",
			"observation_tag", "observation",
			"function_tag", "function_call",
			"system_tag", "system",
		),
	)
}

// readDatasetInfo reads a dataset_info.json: an empty object when there is none.
func readDatasetInfo(path string) (*jsonv.Object, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &jsonv.Object{}, nil
	}
	if err != nil {
		return nil, pathError(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, datasetInfoMax+1))
	if err != nil {
		return nil, pathError(err)
	}
	if len(data) > datasetInfoMax {
		return nil, fmt.Errorf("%s: larger than %d MiB; is it LLaMA-Factory's dataset_info.json?", path, datasetInfoMax>>20)
	}
	v, err := jsonv.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	o, ok := v.(*jsonv.Object)
	if !ok {
		return nil, fmt.Errorf("%s: not a JSON object (LLaMA-Factory's dataset_info.json maps dataset names to entries)", path)
	}
	return o, nil
}

// pathError is err with the path it names in front, without Go's verb ("open").
func pathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}
