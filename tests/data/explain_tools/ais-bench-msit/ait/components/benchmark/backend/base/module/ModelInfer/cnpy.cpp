    loc1 = header.find("descr") + 9; // 9 means offset
    bool littleEndian = (header[loc1] == '<' || header[loc1] == '|' ? true : false);
    if (!littleEndian) {
        throw std::runtime_error("ParseNpyHeader: should be little endian.");
    }
