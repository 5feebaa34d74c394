// A Program's statements as text, one line each, so that a regression file can keep the program beside its tile
// IR: eager mode runs the DSL calls a program makes, not tile IR, so only the program replays an eager failure.
//
//   load result=3 type=f32[2,1] buffer=0 mask=limit constant=0.5
//   for result=4 type=i32[] constant=3 op=2
//     binary result=5 type=f32[2,1] op=0 arg=3:f32[2,1] arg=3:f32[2,1]
//     assign result=3 type=f32[2,1] arg=5:f32[2,1]
//   if type=i1[] arg=7:i1[]
//     ...
//   else
//     ...
//
// A type is its dtype and the log2 of each dimension (the program's shrink applied). A body is indented two
// spaces deeper than its statement; `else` starts an if's else branch. Attributes at their defaults are left out;
// deleted statements are not written. Kinds and mask kinds are written by name, so that files stay readable as
// the enums grow.
#pragma once

#include <string>
#include <vector>

#include "tests/fuzz/difffuzz/Program.h"

namespace tessera::fuzz {

// One line per statement, each ending in '\n'.
std::string formatStatements(const Program& p);

// A line of text and its number in the file it came from.
struct NumberedLine {
  int number = 0;
  std::string text;
};

// The statements of `lines` (as formatStatements writes them, without any comment prefix). Throws tessera::Error
// naming `fileName` and the line number for anything malformed.
std::vector<Stmt> parseStatements(const std::vector<NumberedLine>& lines, const std::string& fileName);

// The number of slots the statements use (1 + the highest slot named).
int slotsUsed(const std::vector<Stmt>& body);

}  // namespace tessera::fuzz
