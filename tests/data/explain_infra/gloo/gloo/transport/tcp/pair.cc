            } else {
              // Either timeout on poll or blocking call returning with EAGAIN
              // indicates timeout
              signalException(GLOO_ERROR_MSG("Read timeout ", peer_.str()));
            }
          } else {
// [...]

        // Unexpected error
        signalException(GLOO_ERROR_MSG(
            "Read error ",
            peer_.str(),
            ": ",
// [...]
    // Transition to CLOSED on EOF
    if (rv == 0) {
      signalException(GLOO_ERROR_MSG(
          "Connection closed by peer ",
          peer_.str(),
          ". ",
