//! The members `hixl::Hixl` and `adxl::AdxlEngine` have in common, exported for one of them
//! by [`engine_members!`]: both classes' members take the same types, so their Itanium names
//! differ only in the class's nested name (`_ZN4hixl4Hixl`, `_ZN4adxl10AdxlEngine`).

/// Export, in the invoking module, the common members of the class whose Itanium names start
/// with `$p`, each one call into [`crate::frontend::hixl`] with `$front`.
macro_rules! engine_members {
    ($front:path, $p:literal) => {
        /// The constructor (complete object).
        #[export_name = concat!($p, "C1Ev")]
        pub unsafe extern "C-unwind" fn ctor_c1(this: *mut c_void) {
            frontend::hixl::construct(&$front, this, Structor::Complete);
            crate::ffi::framed(())
        }

        /// The destructor (complete object).
        #[export_name = concat!($p, "D1Ev")]
        pub unsafe extern "C-unwind" fn dtor_d1(this: *mut c_void) {
            frontend::hixl::destruct(&$front, this, Structor::Complete);
            crate::ffi::framed(())
        }

        /// `Status Initialize(const AscendString &local_engine, const std::map<AscendString, AscendString> &options)`.
        #[export_name = concat!($p, "10InitializeERKN2ge12AscendStringERKSt3mapIS2_S2_St4lessIS2_ESaISt4pairIS3_S2_EEE")]
        pub unsafe extern "C-unwind" fn initialize(
            this: *mut c_void,
            local_engine: *const c_void,
            options: *const c_void,
        ) -> u32 {
            crate::ffi::framed(frontend::hixl::initialize(&$front, this, local_engine, options))
        }

        /// `void Finalize()`.
        #[export_name = concat!($p, "8FinalizeEv")]
        pub unsafe extern "C-unwind" fn finalize(this: *mut c_void) {
            frontend::hixl::finalize(&$front, this);
            crate::ffi::framed(())
        }

        /// `Status RegisterMem(const MemDesc &mem, MemType type, MemHandle &mem_handle)`.
        #[export_name = concat!($p, "11RegisterMemERKNS_7MemDescENS_7MemTypeERPv")]
        pub unsafe extern "C-unwind" fn register_mem(
            this: *mut c_void,
            mem: *const MemDesc,
            ty: u32,
            mem_handle: *mut *mut c_void,
        ) -> u32 {
            crate::ffi::framed(frontend::hixl::register_mem(&$front, this, mem, ty, mem_handle))
        }

        /// `Status DeregisterMem(MemHandle mem_handle)`.
        #[export_name = concat!($p, "13DeregisterMemEPv")]
        pub unsafe extern "C-unwind" fn deregister_mem(this: *mut c_void, mem_handle: *mut c_void) -> u32 {
            crate::ffi::framed(frontend::hixl::deregister_mem(&$front, this, mem_handle))
        }

        /// `Status Connect(const AscendString &remote_engine, int32_t timeout_in_millis)`.
        #[export_name = concat!($p, "7ConnectERKN2ge12AscendStringEi")]
        pub unsafe extern "C-unwind" fn connect(this: *mut c_void, remote: *const c_void, timeout: i32) -> u32 {
            crate::ffi::framed(frontend::hixl::link(&$front, this, LinkCall::Connect, remote, timeout))
        }

        /// `Status Disconnect(const AscendString &remote_engine, int32_t timeout_in_millis)`.
        #[export_name = concat!($p, "10DisconnectERKN2ge12AscendStringEi")]
        pub unsafe extern "C-unwind" fn disconnect(this: *mut c_void, remote: *const c_void, timeout: i32) -> u32 {
            crate::ffi::framed(frontend::hixl::link(&$front, this, LinkCall::Disconnect, remote, timeout))
        }

        /// `Status TransferSync(const AscendString &remote_engine, TransferOp operation,
        /// const std::vector<TransferOpDesc> &op_descs, int32_t timeout_in_millis)`.
        #[export_name = concat!(
            $p,
            "12TransferSyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EEi"
        )]
        pub unsafe extern "C-unwind" fn transfer_sync(
            this: *mut c_void,
            remote: *const c_void,
            operation: u32,
            op_descs: *const c_void,
            timeout: i32,
        ) -> u32 {
            crate::ffi::framed(frontend::hixl::transfer_sync(&$front, this, remote, operation, op_descs, timeout))
        }

        /// `Status TransferAsync(const AscendString &remote_engine, TransferOp operation,
        /// const std::vector<TransferOpDesc> &op_descs, const TransferArgs &optional_args,
        /// TransferReq &req)`.
        #[export_name = concat!(
            $p,
            "13TransferAsyncERKN2ge12AscendStringENS_10TransferOpERKSt6vectorINS_14TransferOpDescESaIS7_EERKNS_12TransferArgsERPv"
        )]
        pub unsafe extern "C-unwind" fn transfer_async(
            this: *mut c_void,
            remote: *const c_void,
            operation: u32,
            op_descs: *const c_void,
            optional_args: *const c_void,
            req: *mut *mut c_void,
        ) -> u32 {
            crate::ffi::framed(frontend::hixl::transfer_async(&$front, this, remote, operation, op_descs, optional_args, req))
        }
    };
}
