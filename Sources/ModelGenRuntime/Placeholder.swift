public enum ModelGenRuntimePlaceholder {}
