  } else {
    if (!cmSystemTools::GetFatalErrorOccurred()) {
      std::string error =
        cmStrCat("Unknown CMake command \"", lff.OriginalName(), "\".");
      this->IssueMessage(MessageType::FATAL_ERROR, error);
      result = false;
// [...]
    this->IssueMessage(MessageType::FATAL_ERROR,
                       cmStrCat("The source directory\n  ", currentStart,
                                "\n"
                                "does not contain a CMakeLists.txt file."));
    return;
  }
