    attr.ai_protocol = 0;
    break;
  }
  GLOO_ENFORCE(ifa != nullptr, "Unable to find address for: ", attr.iface);
  freeifaddrs(ifap);
  return;
