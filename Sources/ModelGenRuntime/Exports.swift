@_exported import ModelGenProgram
